import random


def gen_range_based_input():
    n = random.choice([random.randint(1, 10), random.randint(1, 2000), 2000])
    xm = random.choice([10, 10**4, 10**9])
    vm = random.choice([1, 10, 10**4, 10**9])
    x = [random.randint(1, xm) for _ in range(n)]
    v = [random.randint(1, vm) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, x))}\n{' '.join(map(str, v))}\n"
