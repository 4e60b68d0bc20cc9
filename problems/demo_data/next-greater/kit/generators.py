import random


def gen_range_based_input():
    # Values from a huge range: equal values and long non-increasing stretches
    # are practically absent, like in typical random tests.
    n = random.choice([random.randint(1, 20000), random.randint(15000, 20000), 20000])
    a = [random.randint(1, 10**9) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, a))}\n"
