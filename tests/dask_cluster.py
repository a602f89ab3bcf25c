"""A dask.distributed LocalCluster for tests/test_ranks_dask.py, run by the
test venv's python (build/pyenv): two worker processes of one thread each,
no dashboard. Prints one JSON line, the scheduler's address and the
workers' pids, then holds the cluster until its standard input closes,
closes it and says so ("closing" on standard error, "closed" when done),
so the test can see it go down cleanly.

  build/pyenv/bin/python tests/dask_cluster.py LOCAL_DIRECTORY"""
import json
import os
import sys

from dask.distributed import Client, LocalCluster


def main(local_directory):
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      local_directory=local_directory) as cluster:
        with Client(cluster) as client:
            client.wait_for_workers(2)
            pids = sorted(client.run(os.getpid).values())
        print(json.dumps({"address": cluster.scheduler_address, "pids": pids}), flush=True)
        sys.stdin.read()
        print("closing", file=sys.stderr, flush=True)  # what the workers log from here on is the close's
    print("closed", flush=True)


if __name__ == "__main__":  # the workers are spawned: they import this file again
    main(sys.argv[1])
