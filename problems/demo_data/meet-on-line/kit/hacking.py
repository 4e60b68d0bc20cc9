import random


# Targets printing too few decimals: answers far below 1 (close friends, fast walkers).
def gen_hacking_input_tiny_answer():
    n = random.randint(2, 2000)
    base = random.randint(1, 10**9 - 1000)
    x = [base + random.randint(0, 1000) for _ in range(n)]
    v = [random.randint(10**8, 10**9) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, x))}\n{' '.join(map(str, v))}\n"


# Targets "meet in the middle of the extremes": one end friend is very fast,
# so the best point is far from the midpoint.
def gen_hacking_input_fast_end():
    n = random.randint(2, 2000)
    x = sorted(random.randint(1, 10**9) for _ in range(n))
    v = [random.randint(1, 10) for _ in range(n)]
    v[0] = 10**9
    return f"{n}\n{' '.join(map(str, x))}\n{' '.join(map(str, v))}\n"


# Targets fixed absolute search bounds or float overflow: answer near its
# maximum (5e8) with the two extremes both slow.
def gen_hacking_input_huge_answer():
    n = random.randint(2, 2000)
    x = [random.randint(1, 10**9) for _ in range(n)]
    v = [random.randint(1, 10**9) for _ in range(n)]
    x[0], v[0] = 1, 1
    x[-1], v[-1] = 10**9, 1
    return f"{n}\n{' '.join(map(str, x))}\n{' '.join(map(str, v))}\n"
