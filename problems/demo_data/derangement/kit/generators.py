import random


def gen_range_based_input():
    shape = random.random()
    if shape < 0.3:
        ns = [random.randint(1, 10) for _ in range(random.randint(1, 1000))]
    elif shape < 0.6:
        t = random.randint(1, 50)
        ns = [random.randint(1, 5 * 10**4 // t) for _ in range(t)]
    elif shape < 0.8:
        ns = [random.randint(1, 5 * 10**4)]
    else:
        t = random.randint(1, 1000)
        ns = [random.randint(1, 5 * 10**4 // t) for _ in range(t)]
    return f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n"
