from pcsc.cli import main

raise SystemExit(main())
