import random


def gen_range_based_input():
    n = random.choice([random.randint(1, 100), random.randint(1, 20000), 20000])
    mode = random.random()
    if mode < 0.4:
        lo, hi = -10**9, 10**9
    elif mode < 0.6:
        lo, hi = -10**9, 10**9 // 2     # mostly losses
    elif mode < 0.8:
        lo, hi = -10**9 // 2, 10**9     # mostly profits
    else:
        m = random.choice([10, 1000, 10**6])
        lo, hi = -m, m
    a = [random.randint(lo, hi) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, a))}\n"
