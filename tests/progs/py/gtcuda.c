/* gtcuda: a Python extension module that calls CUDA the way PyTorch's
 * bindings do, with the GIL released around each call (and one entry point
 * that keeps it, for contrast). Built by tests/test_python.py against each
 * interpreter it finds, linked to the simulated runtime. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static char *gtcuda_host;         /* shared, only ever read by the copies */
static __thread void *gtcuda_dev; /* each thread copies into its own */
#define GTCUDA_MAX_COPY (1 << 20)

/* Buffers are never freed: threads copy with the GIL released while
 * others call in. Called with the GIL held. */
static int gtcuda_ready(size_t n)
{
    if (n > GTCUDA_MAX_COPY) {
        PyErr_SetString(PyExc_ValueError, "copy larger than 1 MiB");
        return -1;
    }
    if (!gtcuda_host && !(gtcuda_host = calloc(1, GTCUDA_MAX_COPY))) {
        PyErr_SetString(PyExc_MemoryError, "no host buffer");
        return -1;
    }
    if (!gtcuda_dev && cudaMalloc(&gtcuda_dev, GTCUDA_MAX_COPY) != cudaSuccess) {
        gtcuda_dev = NULL;
        PyErr_SetString(PyExc_MemoryError, "no device buffer");
        return -1;
    }
    return 0;
}

/* copy_h2d(nbytes): one blocking pageable host-to-device copy, GIL released. */
static PyObject *gtcuda_copy_h2d(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "n", &n) || gtcuda_ready((size_t)n) < 0)
        return NULL;
    cudaError_t rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cudaMemcpy(gtcuda_dev, gtcuda_host, (size_t)n, cudaMemcpyHostToDevice);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(rc);
}

/* launch(name): one kernel launch on the legacy stream, GIL released. */
static PyObject *gtcuda_launch(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    /* A kernel is registered once, as a .cu file's are; the last one is
     * kept, since loops launch the same kernel again and again. */
    static char last_name[128];
    static const void *last;
    if (!last || strcmp(name, last_name) != 0) {
        snprintf(last_name, sizeof(last_name), "%s", name);
        last = fakecuda_runtime_kernel(last_name, 0);
    }
    const void *k = last;
    cudaError_t rc;
    Py_BEGIN_ALLOW_THREADS
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    rc = cudaLaunchKernel(k, g, b, NULL, 0, NULL);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(rc);
}

/* sync(): cudaDeviceSynchronize, GIL released. */
static PyObject *gtcuda_sync(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    cudaError_t rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cudaDeviceSynchronize();
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(rc);
}

/* sync_holding_gil(): the same with the GIL held throughout. */
static PyObject *gtcuda_sync_holding_gil(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyLong_FromLong(cudaDeviceSynchronize());
}

static PyMethodDef gtcuda_methods[] = {
    {"copy_h2d", gtcuda_copy_h2d, METH_VARARGS, NULL},
    {"launch", gtcuda_launch, METH_VARARGS, NULL},
    {"sync", gtcuda_sync, METH_NOARGS, NULL},
    {"sync_holding_gil", gtcuda_sync_holding_gil, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef gtcuda_module = {PyModuleDef_HEAD_INIT, "gtcuda", NULL, -1, gtcuda_methods,
                                           NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_gtcuda(void)
{
    return PyModule_Create(&gtcuda_module);
}
