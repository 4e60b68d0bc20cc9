import random


def gen_range_based_input():
    n = random.choice([random.randint(1, 30), random.randint(1, 10**4), 5000, 10**4])
    m = random.choice([random.randint(0, 10**4), 10**4, random.randint(0, min(10**4, 2 * n))])
    wmax = random.choice([1, 10, 1000, 10**6])
    edges = []
    if random.random() < 0.5 and n > 1:
        # A random spanning tree first, so that most crossroads are reachable.
        for v in range(2, n + 1):
            if len(edges) >= m:
                break
            edges.append((random.randint(1, v - 1), v))
        perm = [1] + random.sample(range(2, n + 1), n - 1)
        edges = [(perm[u - 1], perm[v - 1]) for u, v in edges]
    while len(edges) < m:
        edges.append((random.randint(1, n), random.randint(1, n)))
    random.shuffle(edges)
    lines = [f"{n} {m}"] + [f"{u} {v} {random.randint(1, wmax)}" for u, v in edges]
    return "\n".join(lines) + "\n"
