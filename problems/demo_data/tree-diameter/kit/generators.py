import random


def _render(n, edges):
    perm = list(range(1, n + 1))
    random.shuffle(perm)
    random.shuffle(edges)
    lines = [str(n)]
    for u, v, w in edges:
        a, b = perm[u - 1], perm[v - 1]
        if random.random() < 0.5:
            a, b = b, a
        lines.append(f"{a} {b} {w}")
    return "\n".join(lines) + "\n"


def gen_range_based_input():
    n = random.choice([random.randint(1, 50), random.randint(1, 10**4), 10**4])
    wmax = random.choice([1, 10, 1000, 10**6])
    # Random recursive tree (each vertex hangs under a random earlier one):
    # depth stays logarithmic, like most random trees.
    edges = [(i, random.randint(1, i - 1), random.randint(1, wmax)) for i in range(2, n + 1)]
    return _render(n, edges)
