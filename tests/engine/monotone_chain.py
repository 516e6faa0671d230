"""The monotone chain as first written (numpy scalars, one test per step): the lower hull the package's fast chains
(``dominated_pld.lower_chain``, ``truncated._chain``) must give, test for test."""


def plain_chain(x, y, idx):
    """Indices (of ``idx``, in order) kept by the monotone chain over the points (x[i], y[i])."""
    hull = []
    for i in idx.tolist():
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (y[b] - y[a]) * (x[i] - x[a]) >= (y[i] - y[a]) * (x[b] - x[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return hull
