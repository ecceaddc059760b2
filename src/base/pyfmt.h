/*
 * pyfmt.h - numbers printed as Python prints them. The official accuracy and checker
 * scripts print floats with repr() or json.dumps() (evaluate-v1.1.py's {"exact_match": 50.0},
 * accuracy_eval.py's "Word Error Rate: 7.44...%", the checker's "score" lines), and tools that
 * parse those lines expect Python's text, not C's %g ("5e+01" is read as nothing by the v1.1
 * checker's pattern for 50.0).
 */
#ifndef IB_BASE_PYFMT_H
#define IB_BASE_PYFMT_H

#include <stddef.h>

/*
 * ib_py_float_repr - Python's repr(float), which is also what str(), "{}".format() and
 * json.dumps() print for a float: the shortest digits that read back to the same double,
 * positional for 1e-4 <= |v| < 1e16 with at least one digit after the point ("50.0",
 * "0.0001", "1234567890123456.0"), otherwise d.ddde+XX ("1e+16", "1.5e-05"); "inf", "-inf",
 * "nan" (json.dumps writes Infinity/NaN there: callers that emit JSON handle those).
 * The text is truncated to n - 1 bytes; 32 bytes always suffice.
 * Thread-safety: reentrant.
 */
void ib_py_float_repr(double v, char *buf, size_t n);

#endif
