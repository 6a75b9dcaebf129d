"""The compiled scanner of `riskreport.io.letor` (numba), imported on first read: planning a report needs no numba."""

import numpy as np
from numba import njit

from .cache import use_numba_cache

use_numba_cache()  # the machine code goes to the riskreport cache, not beside this file

FLOAT32_MAX = float(np.finfo(np.float32).max)  # features are stored as 32-bit floats, as LightGBM bins them


@njit(cache=True, nogil=True)
def number(buf, p, end):
    """A decimal number at buf[p:end] ([+-]digits[.digits][e[+-]digits]); (value, ok)."""
    sign, mantissa, digits, scale, seen, point, q = 1.0, 0, 0, 0, False, False, p
    if q < end and (buf[q] == 43 or buf[q] == 45):
        sign = -1.0 if buf[q] == 45 else 1.0
        q += 1
    while q < end and (48 <= buf[q] <= 57 or (buf[q] == 46 and not point)):
        if buf[q] == 46:
            point = True
        elif digits < 18:  # significant digits kept; leading zeros do not count
            seen = True
            mantissa = mantissa * 10 + (buf[q] - 48)
            digits += mantissa > 0
            scale -= point
        else:
            seen = True
            scale += not point
        q += 1
    if not seen:
        return 0.0, False
    if q < end and (buf[q] == 101 or buf[q] == 69):
        q += 1
        esign, exponent, seen = 1, 0, False
        if q < end and (buf[q] == 43 or buf[q] == 45):
            esign = -1 if buf[q] == 45 else 1
            q += 1
        while q < end and 48 <= buf[q] <= 57:
            exponent = min(exponent * 10 + (buf[q] - 48), 10_000)
            seen = True
            q += 1
        if not seen:
            return 0.0, False
        scale += esign * exponent
    if q != end:
        return 0.0, False
    value = float(mantissa)
    if scale < 0:
        value = value / 10.0 ** (-scale) if scale >= -300 else value / 1e300 / 10.0 ** min(-scale - 300, 400)
    elif scale > 0:
        value = value * 10.0 ** min(scale, 400)
    return sign * value, True


@njit(cache=True, nogil=True)
def whole(buf, p, end):
    """A whole number ≥ 0 at buf[p:end]; −1 if it is not one."""
    if p >= end or end - p > 18:
        return -1
    value = 0
    for q in range(p, end):
        if not 48 <= buf[q] <= 57:
            return -1
        value = value * 10 + (buf[q] - 48)
    return value


@njit(cache=True, nogil=True)
def scan(buf, fill, labels, qids, lines, features, max_feature):
    """Check (fill=False) or read (fill=True) every line. Returns (status, line, column, rows, widest)."""
    n, p, line, row, widest = buf.shape[0], 0, 0, 0, 0
    while p < n:
        line += 1
        start = p
        eol = p
        while buf[eol] != 10:
            eol += 1
        end = eol
        for q in range(start, eol):  # a comment runs to the end of the line
            if buf[q] == 35:
                end = q
                break
        p = eol + 1
        field, q, label, last = 0, start, 0.0, -1
        while True:
            while q < end and (buf[q] == 32 or buf[q] == 9 or buf[q] == 13):
                q += 1
            if q >= end:
                break
            t = q
            while t < end and not (buf[t] == 32 or buf[t] == 9 or buf[t] == 13):
                t += 1
            column = q - start + 1
            if field == 0:
                label, ok = number(buf, q, t)
                if not ok:
                    return 1, line, column, row, widest
                if label < 0 or label != np.floor(label) or label > 1e9:
                    return 2, line, column, row, widest
            elif field == 1:
                if not (t - q > 4 and buf[q] == 113 and buf[q + 1] == 105 and buf[q + 2] == 100 and buf[q + 3] == 58):
                    return 3, line, column, row, widest
                qid = whole(buf, q + 4, t)
                if qid < 0:
                    return 3, line, column, row, widest
                if fill:
                    qids[row] = qid
            else:
                colon = q
                while colon < t and buf[colon] != 58:
                    colon += 1
                if colon == t:
                    return 4, line, column, row, widest
                feature = whole(buf, q, colon)
                if feature < 1 or feature > max_feature:
                    return 5, line, column, row, widest
                value, ok = number(buf, colon + 1, t)
                if not ok:
                    return 6, line, column, row, widest
                if not abs(value) <= FLOAT32_MAX:  # 1e999 or 1e39 would be read as inf, as the literal inf is refused
                    return 8, line, column, row, widest
                if feature <= last:
                    return 7, line, column, row, widest
                if fill:
                    features[row, feature - 1] = value
                last = feature
                widest = max(widest, feature)
            field += 1
            q = t
        if field == 0:
            continue  # a blank or comment-only line
        if field == 1:
            return 3, line, end - start + 1, row, widest
        if fill:
            labels[row] = np.int32(label)
            lines[row] = line
        row += 1
    return 0, 0, 0, row, widest
