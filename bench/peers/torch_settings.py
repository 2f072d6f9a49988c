"""The PyTorch settings bench/run_bench.py tries for each thread count, to compare lockstep with
PyTorch at its best on this machine rather than as one configuration happens to run it.

Debian's PyTorch 1.13 runs its own parallel loops on GNU OpenMP and calls OpenBLAS for matrix
products, and Debian's default OpenBLAS (libopenblas0-pthread) keeps a second pool of its own
threads: with 2 threads each, the two pools' waiting threads compete for this machine's 2 cores.
Each setting is (label, environment, train_peers.py arguments); the label names only what differs
from PyTorch as shipped with its thread count set (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
torch.set_num_threads all T).
"""

# Debian's alternative OpenBLAS build that runs on GNU OpenMP, so PyTorch and its BLAS share one pool.
OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"


def settings(threads):
    """[(label, env, args)] for one thread count."""
    out = [("as shipped", {}, [])]
    if threads > 1:
        out += [("OpenBLAS 1 thread", {}, ["--blas-threads", "1"]),
                ("OpenBLAS on OpenMP", {"LD_LIBRARY_PATH": OPENBLAS_OPENMP}, []),
                ("OMP_WAIT_POLICY=PASSIVE", {"OMP_WAIT_POLICY": "PASSIVE"}, []),
                ("OMP_WAIT_POLICY=PASSIVE, OpenBLAS 1 thread", {"OMP_WAIT_POLICY": "PASSIVE"}, ["--blas-threads", "1"]),
                ("OMP_WAIT_POLICY=ACTIVE, OpenBLAS on OpenMP", {"OMP_WAIT_POLICY": "ACTIVE",
                                                                "LD_LIBRARY_PATH": OPENBLAS_OPENMP}, []),
                ("interop threads 1", {}, ["--interop-threads", "1"])]
    else:
        out += [("OMP_WAIT_POLICY=PASSIVE", {"OMP_WAIT_POLICY": "PASSIVE"}, []),
                ("OpenBLAS on OpenMP", {"LD_LIBRARY_PATH": OPENBLAS_OPENMP}, [])]
    out += [("MKL-DNN off", {}, ["--mkldnn", "off"]),
            ("ATEN_CPU_CAPABILITY=avx512", {"ATEN_CPU_CAPABILITY": "avx512"}, [])]
    return out
