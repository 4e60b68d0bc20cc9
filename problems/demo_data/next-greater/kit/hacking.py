import random


# Targets the forward-scan solution (scan from i until a greater value): a
# strictly decreasing array makes every scan run to the end, n^2/2 steps.
def gen_hacking_input_strictly_decreasing():
    n = 20000
    cur = 10**9
    a = []
    for _ in range(n):
        a.append(cur)
        cur -= random.randint(1, 40000)
    return f"{n}\n{' '.join(map(str, a))}\n"


# Targets both the forward scan (never finds a strictly greater value) and
# stacks that treat an equal value as greater.
def gen_hacking_input_all_equal():
    n = 20000
    v = random.randint(1, 10**9)
    return f"{n}\n{' '.join([str(v)] * n)}\n"


# Targets the "equal counts as greater" mistake: a non-increasing staircase of
# long plateaus, so every answer depends on skipping equal values.
def gen_hacking_input_plateaus():
    n = 20000
    a = []
    v = 10**9
    while len(a) < n:
        a.extend([v] * random.randint(1, 300))
        v -= random.randint(1, 1000)
    a = a[:n]
    return f"{n}\n{' '.join(map(str, a))}\n"
