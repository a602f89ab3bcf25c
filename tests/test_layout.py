"""The source layout (preload/README.md, analyzer/README.md): every file
sits in a layer folder, and no layer uses a symbol defined in a layer
above it. Checked on the object files the build made, from the symbols
each defines and references, so a call hidden behind a hand-written
declaration is caught as surely as one behind an #include."""
import glob
import os
import re
import subprocess

from gtlib import BUILD, ROOT

LAYERS = {
    "preload": ["base", "cupti", "hot", "sampler", "writer", "session"],
    "analyzer": ["base", "trace", "analysis", "output", "cmd"],
}

# The upward edges the design allows, each through a pointer set before
# use (preload/README.md): (layer that refers, symbol).
ALLOWED_UP = {
    ("hot", "gt_call_starter"),
}


def _symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRVWGSC":
            defined.add(parts[2])
    return defined, used


def _check_tree(top):
    layers = LAYERS[top]
    srcdir = os.path.join(ROOT, top)
    stray = [f for f in os.listdir(srcdir) if f.endswith((".c", ".h", ".def"))]
    assert not stray, "%s/ files outside a layer folder: %s" % (top, stray)
    folders = sorted(d for d in os.listdir(srcdir) if os.path.isdir(os.path.join(srcdir, d)))
    assert folders == sorted(layers), (folders, layers)
    owner, uses = {}, []
    for rank, layer in enumerate(layers):
        assert os.path.exists(os.path.join(srcdir, layer, "README.md")), "%s/%s has no README.md" % (top, layer)
        srcs = glob.glob(os.path.join(srcdir, layer, "*.c"))
        assert srcs, "%s/%s has no sources" % (top, layer)
        for src in srcs:
            obj = os.path.join(BUILD, top, layer, os.path.basename(src)[:-2] + ".o")
            assert os.path.exists(obj), "not built: %s (run make)" % obj
            assert os.path.getmtime(obj) >= os.path.getmtime(src), "stale: %s (run make)" % obj
            defined, used = _symbols(obj)
            # The project's own symbols; the interposed CUDA and libc names
            # (dlsym, _exit...) are the program's to call, not a layer's.
            for sym in defined:
                if sym.startswith("gt_"):
                    owner[sym] = rank
            uses.append((rank, layer, os.path.relpath(src, ROOT), used))
    up = []
    for rank, layer, src, used in uses:
        for sym in used:
            if sym in owner and owner[sym] > rank and (layer, sym) not in ALLOWED_UP:
                up.append("%s uses %s from %s/" % (src, sym, layers[owner[sym]]))
    assert not up, "lower layers calling higher ones:\n  " + "\n  ".join(sorted(up))
    return owner


def test_preload_layers_call_only_downward():
    owner = _check_tree("preload")
    # The allowed upward edge really is the only one, and still exists.
    assert owner.get("gt_call_starter") == LAYERS["preload"].index("session")


def test_analyzer_layers_call_only_downward():
    _check_tree("analyzer")


def test_includes_name_their_layer():
    """Project headers are included as "layer/gt_x.h", so a reader sees the
    direction of each dependency where it is made; and no include reaches
    a higher layer."""
    bad = []
    for top, layers in LAYERS.items():
        for rank, layer in enumerate(layers):
            for f in glob.glob(os.path.join(ROOT, top, layer, "*.[ch]")):
                for inc in re.findall(r'#include "([^"]+)"', open(f).read()):
                    if inc in ("gt_schema_sql.h", "gt_schema_db.h", "gt_error_names.h", "perfetto_trace.pb-c.h",
                               "gt_report_html_timeline_css.h", "gt_report_html_timeline_js.h",
                               "gt_kernel_categories_tsv.h"):
                        continue  # generated into build/gen
                    head = inc.split("/")[0]
                    if top == "analyzer" and inc.startswith("preload/"):
                        continue  # the shared settings parser
                    if head not in layers:
                        bad.append("%s: %s names no layer" % (os.path.relpath(f, ROOT), inc))
                    elif layers.index(head) > rank:
                        bad.append("%s: includes %s from a higher layer" % (os.path.relpath(f, ROOT), inc))
    assert not bad, "\n".join(bad)
