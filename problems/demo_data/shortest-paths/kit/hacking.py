import random


# Targets 32-bit distances: a single chain of 10^4 crossroads starting at 1
# with maximal weights (the far end is about 1e10 away), labels shuffled.
def gen_hacking_input_heavy_chain():
    n = 10**4
    order = [1] + random.sample(range(2, n + 1), n - 1)
    lines = [f"{n} {n - 1}"]
    for i in range(n - 1):
        lines.append(f"{order[i]} {order[i + 1]} {random.randint(999000, 10**6)}")
    return "\n".join(lines) + "\n"


# Targets finalising a crossroad when it is first pushed: heavy direct
# streets from 1 and a cheap detour that reaches every crossroad later.
def gen_hacking_input_cheap_detour():
    n = random.randint(100, 5000)
    lines = []
    for v in range(2, n + 1):
        lines.append(f"1 {v} {random.randint(500000, 10**6)}")
    for v in range(2, n):
        lines.append(f"{v} {v + 1} {random.randint(1, 10)}")
    lines = lines[:10**4]
    random.shuffle(lines)
    return f"{n} {len(lines)}\n" + "\n".join(lines) + "\n"


# Targets O(n^2) Dijkstra: maximum n, everything reachable.
def gen_hacking_input_max_connected():
    n, m = 10**4, 10**4
    edges = [(random.randint(1, v - 1), v) for v in range(2, n + 1)]
    while len(edges) < m:
        edges.append((random.randint(1, n), random.randint(1, n)))
    random.shuffle(edges)
    lines = [f"{n} {m}"] + [f"{u} {v} {random.randint(1, 10**6)}" for u, v in edges]
    return "\n".join(lines) + "\n"
