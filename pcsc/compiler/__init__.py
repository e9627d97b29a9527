"""The compile driver: the session (parse, lower, bind a policy, score, discharge),
cohorts, parallel and Dask workers, the IR cache, folder walks.
"""
