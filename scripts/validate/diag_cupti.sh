mkdir -p build/carry; for f in build/carry-all/*; do b=${f##*/}; ldconfig -p | grep -q "[[:space:]]$b[[:space:]]" || cp $f build/carry/; done
export LD_LIBRARY_PATH=$PWD/build/carry
D=$OUT/d; mkdir -p $D
nvcc -cudart static -O1 -o /tmp/vs tests/progs/vecadd.cu
for mode in work all; do
  GPUTRACE_CUPTI_API_RECORDS=$mode GPUTRACE_CUPTI_DUMP=$D/vs-$mode LD_PRELOAD=$PWD/build/libgputrace.so GPUTRACE_OUTPUT=$D/vs-$mode.db /tmp/vs
  GPUTRACE_CUPTI_API_RECORDS=$mode GPUTRACE_CUPTI_DUMP=$D/tl-$mode LD_PRELOAD=$PWD/build/libgputrace.so GPUTRACE_OUTPUT=$D/tl-$mode.db timeout 120 python3 scripts/validate/torch_libs.py 1
done
python3 -c "import torch; print(torch.__version__)"; ls -la $D; cd $OUT && tar czf d.tgz d && rm -rf d
