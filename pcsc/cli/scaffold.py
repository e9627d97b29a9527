"""The files `pcsc init` writes: a small route, an obligation library, a policy that
extends the shipped one, a policy test, and a `pcsc.toml` that points the command
line at them.

Every file is a template filled with the project's name; the result checks, compiles
and passes GATE as written (the tests run `pcsc check`, `gate` and `compile` on it).
This module only builds the texts and finds which would overwrite existing files;
the command writes them.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import attrs

NAME = re.compile(r"^[a-z0-9_-]+$")
DEFAULT_NAME = "myproject"
BASE_POLICY = "venture@1.0.0"


@attrs.frozen
class Project:
    """The project's names: ``name`` for the policy id and folder, ``ident`` (``-``
    turned into ``_``; a leading digit gets ``_``) for the library, which the route
    language names with identifiers."""

    name: str

    @property
    def ident(self) -> str:
        ident = self.name.replace("-", "_")
        return "_" + ident if ident[0].isdigit() else ident


def valid_name(name: str) -> bool:
    return bool(NAME.match(name))


def files(project: Project) -> dict[str, str]:
    """Relative path -> text of every file `pcsc init` writes, in writing order."""
    name, ident = project.name, project.ident
    library = LIBRARY.format(name=name, ident=ident)
    # the template is in `pcsc fmt`'s layout, so its bytes are its canonical text (a test checks)
    pin = hashlib.sha256(library.encode("utf-8")).hexdigest()
    return {
        "pcsc.toml": CONFIG,
        f"obligations/{ident}.obl": library,
        f"policies/{name}/1.0.0.toml": POLICY.format(name=name, base=BASE_POLICY, ident=ident, sha256=pin),
        "routes/example.route": ROUTE.format(name=name, ident=ident),
        f"policies/{name}/tests/example.pcsctest.toml": POLICY_TEST.format(name=name),
    }


def existing(root: Path, project: Project) -> list[str]:
    """The files of ``project`` that already exist under ``root`` (relative, sorted)."""
    return sorted(rel for rel in files(project) if (root / rel).exists())


CONFIG = """\
# pcsc.toml: settings for the routes and policy tests in this folder and below it,
# wherever `pcsc` runs (`pcsc config FILE` shows those that apply to FILE). Paths are
# relative to this file.
lib_path    = ["obligations"]   # the project's .obl libraries (after each route's own folder)
policy_path = ["policies"]      # the project's policies/<id>/<version>.toml (before the shipped ones)
"""

LIBRARY = """\
# obligations/{ident}.obl: the state fields routes of this project may use, and the
# obligations a transition must discharge before a change of those fields counts.
# A route says `uses {ident}`; every material change it claims must be covered.
library {ident} version "1.0.0"

# field NAME TYPE material THRESHOLD: a change smaller than the threshold is not
# material and needs no obligation (types: count, number, ratio, usd, bool).
# users: active users, material at a relative change of 10%; customers: paying
# customers, material at any change; revenue: the annualised revenue run-rate.
field users      count  material 10%
field customers  count  material 1
field revenue    usd    material 10k usd

# An obligation covers fields; a transition that lists it in `discharges` covers a
# change of those fields when every `require` line holds (docs/coverage.md).
obligation traction covers users {{
    # the transition says how it gets there and when it stops; its threshold bounds
    # every claimed change; at least one admissible tier-2 source supports it
    require mechanism
    require kill
    require measured(delta)
    require evidence(tier >= 2) >= 1
}}

obligation monetization covers customers, revenue {{
    # also an asset (what it builds or owns to get paid), and an authored budget
    # that pays the policy's delta-indexed floor for the change it claims
    require mechanism
    require asset
    require kill
    require measured(delta)
    require budget >= floor(delta)
}}
"""

POLICY = """\
# policies/{name}/1.0.0.toml: the project's policy. It extends the shipped {base}
# (evidence weights, reweighting, criteria, buckets and gates come from there) and
# adds the reference classes and delta-indexed floors the project's routes use.
# Every number here is a placeholder: replace it with a base rate you can defend.
# A published version never changes: write 1.1.0 with `extends = "{name}@1.0.0"`.
[policy]
id = "{name}"
version = "1.0.0"
extends = "{base}"
coverage = "gate"   # gate: withhold the score of a route with an uncovered change

[priors."{name}/first-users"]
p = 0.40
floor_usd = 40_000
source = "placeholder: share of comparable launches reaching their first thousand users in six months"

[priors."{name}/first-revenue"]
p = 0.25
floor_usd = 250_000
source = "placeholder: share of products with a thousand users reaching a hundred paying customers"

[priors."{name}/scale"]
p = 0.08
floor_usd = 10_000_000
source = "placeholder: share of companies past first revenue reaching 50M of annual revenue"

# (|delta|, usd) breakpoints: what a change of this size costs at least.
[floors.delta.revenue]
points = [[1e5, 5e4], [1e6, 4e5], [1e7, 3e6], [1e8, 2.5e7]]

[floors.delta.customers]
points = [[10, 2e4], [100, 1e5], [1000, 6e5], [10000, 4e6]]

# The obligations that judge this project's routes belong to the policy: a route may
# use only the libraries pinned here (and the pins of {base}), each with exactly
# this content. After editing obligations/{ident}.obl, `pcsc policy check {name}@1.0.0`
# prints its new sha256 to pin.
[libraries.{ident}]
version = "1.0.0"
sha256 = "{sha256}"
"""

ROUTE = """\
# routes/example.route: a small route to start from. `pcsc check routes/` checks it,
# `pcsc compile routes/` computes its numbers and `pcsc gate routes/` asks whether every
# material change is covered. The language: docs/language.md of PCSC.
route example "A first route for {name}" {{
    # as_of: the date the forecast is made (evidence captured later is excluded);
    # policy: the policy that owns every probability and floor;
    # uses: the obligation library, obligations/{ident}.obl.
    as_of   2025-01-01
    policy  "{name}@1.0.0"
    uses    {ident}

    # States list field values; a later state lists only what changes.
    state start    {{ users 0    customers 0    revenue 0 usd }}
    state launched {{ users 1k }}
    state paying   {{ users 5k   customers 100  revenue 500k usd }}
    state scaled   {{ users 200k customers 5k   revenue 50M usd }}

    # The value of reaching the last state: tam * capture * defensibility.
    vision scaled {{
        tam            10B usd
        capture        5%
        defensibility  0.6
    }}

    # A transition: who does what, at which reference class (the policy's prior p),
    # what it measures (threshold), when it stops (kill), how long and at what cost.
    transition launch: start -> launched {{
        actor      "the founding team"
        mechanism  "a free tier announced to a waiting list"
        asset      "a working first version"
        class      "{name}/first-users"
        threshold  users >= 1k
        kill       users < 100
        horizon    6 months
        cost {{
            founders  2 * 40k usd
        }}
        # estimates: the author's own guesses, recorded and never used for p;
        # discharges: the obligations of obligations/{ident}.obl this step discharges.
        estimates  0.5 0.6
        discharges traction
    }}

    transition monetize: launched -> paying {{
        actor      "founders and a first sales hire"
        mechanism  "paid team plans"
        asset      "billing and team accounts"
        class      "{name}/first-revenue"
        threshold  users >= 5k and customers >= 100 and revenue >= 500k usd
        kill       customers < 10
        horizon    12 months
        cost {{
            team  4 * 120k usd
        }}
        discharges traction, monetization
    }}

    transition scale: paying -> scaled {{
        actor      "the company"
        mechanism  "a sales team and channel partners"
        asset      "an enterprise tier"
        class      "{name}/scale"
        threshold  users >= 200k and customers >= 5k and revenue >= 50M usd
        kill       revenue < 2M usd
        horizon    3 years
        cost {{
            company  1 * 20M usd
        }}
        discharges traction, monetization
    }}

    # Evidence: admissible sources reweight p; `supports` names the transitions.
    evidence waiting_list {{
        source    "the project's waiting list, December 2024"
        captured  2024-12-15
        tier      2
        weight    0.7
        supports  launch, monetize, scale
        excerpt   "1,200 people joined the waiting list in four weeks."
    }}

    # Criteria scores (0-100) for the policy's criteria; they give T and the bucket.
    criteria {{
        team     60
        market   55
        wedge    50
    }}
}}
"""

POLICY_TEST = """\
# policies/{name}/tests/example.pcsctest.toml: what {name}@1.0.0 must decide on the
# example route. `pcsc test policies/` runs it; docs/policy-tests.md of PCSC has the format.
# Paths are relative to this file.

[[case]]
name = "the example route is released"
route = "../../../routes/example.route"
expect.verdict = "released"
expect.score = {{ min = 0 }}
expect.bucket = "pos"
expect.binding = "scale"

[[case]]
name = "deleting the monetize step is refused"
route = "../../../routes/example.route"
splice = 1
expect.verdict = "suspend-and-ask"
"""
