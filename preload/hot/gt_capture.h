/* gt_capture.h: streams in stream capture (CUDA Graphs). */
#ifndef GT_CAPTURE_H
#define GT_CAPTURE_H

#include <stdint.h>

void gt_capture_begin(uint64_t stream);
void gt_capture_end(uint64_t stream);
/* 1 when work submitted to `stream` now becomes a graph node. */
int gt_capturing(uint64_t stream);

#endif
