"""scripts/gen_error_names.py: NVIDIA's result names read from the
toolkit's headers at build time (build/gen/gt_error_names.h), never typed
by hand."""
import os
import re
import subprocess
import sys

import make_trace as mt
from gtlib import BUILD, ROOT, assert_eq, tmpdir

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_error_names  # noqa: E402


def _write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def test_values_decimal_hex_implied_and_aliases():
    d = tmpdir()
    _write(d, "driver_types.h", """
enum __device_builtin__ cudaError
{
    /** The API call returned with no errors. (x = 3, y) */
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1, // the caller's fault
    cudaErrorNext,
    cudaErrorHex = 0x10,
    cudaErrorAfterHex,
    cudaErrorOldSpelling = 1,   /* deprecated: repeats a code */
    cudaErrorSameAsHex = cudaErrorHex,
    cudaErrorUnknown = 999
};
""")
    _write(d, "cuda.h", """
typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_BIG = 0X3E8U,
    CUDA_ERROR_AFTER
} CUresult;
""")
    runtime, driver = gen_error_names.parse(d)
    assert_eq(runtime, [(0, "cudaSuccess"), (1, "cudaErrorInvalidValue"), (2, "cudaErrorNext"), (16, "cudaErrorHex"),
                        (17, "cudaErrorAfterHex"), (999, "cudaErrorUnknown")])
    assert_eq(driver, [(0, "CUDA_SUCCESS"), (1, "CUDA_ERROR_INVALID_VALUE"), (1000, "CUDA_ERROR_BIG"),
                       (1001, "CUDA_ERROR_AFTER")])
    # a header it cannot read stops the build rather than naming codes wrongly
    out = os.path.join(d, "out.h")
    for body, why in (("CUDA_SUCCESS = 0, CUDA_X = 1 << 3", "cannot read the value"),
                      ("CUDA_SUCCESS = 0,\n#if 0\n CUDA_X = 50,\n#endif\n CUDA_Y", "preprocessor lines")):
        _write(d, "cuda.h", "typedef enum cudaError_enum { %s } CUresult;" % body)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_error_names.py"), d, out],
                           capture_output=True, text=True)
        assert r.returncode != 0 and why in r.stderr, r
        assert not os.path.exists(out)


def test_generated_header_matches_the_toolkit():
    """The header the build made holds every code of the toolkit's headers,
    and compiles as C with the project's warnings."""
    header = os.path.join(BUILD, "gen", "gt_error_names.h")
    with open(header) as f:
        text = f.read()
    names = mt.result_names()
    for lib, array, count in (("runtime", "gt_rt_error_names", "GT_RT_ERROR_NAMES_N"),
                              ("driver", "gt_drv_error_names", "GT_DRV_ERROR_NAMES_N")):
        body = re.search(r"%s\[\] = \{(.*?)\};" % array, text, re.S).group(1)
        entries = [(int(c), n) for c, n in re.findall(r'\{(-?\d+), "(\w+)"\}', body)]
        assert_eq(entries, sorted((c, n) for (l, c), n in names.items() if l == lib), lib)
        assert_eq(int(re.search(r"#define %s (\d+)" % count, text).group(1)), len(entries), count)
    d = tmpdir()
    src = _write(d, "t.c", '#include "gt_error_names.h"\n'
                           'int main(void) { return gt_rt_error_names[GT_RT_ERROR_NAMES_N - 1].code > 0 &&\n'
                           '    gt_drv_error_names[1].code == 1 ? 0 : 1; }\n')
    exe = os.path.join(d, "t")
    r = subprocess.run(["cc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I", os.path.dirname(header), "-o", exe,
                        src], capture_output=True, text=True)
    assert_eq(r.returncode, 0, r.stderr)
    assert_eq(subprocess.run([exe]).returncode, 0)
