import random


def gen_range_based_input():
    t = random.choice([random.randint(1, 10), random.randint(1, 10**4), 10**4])
    top = random.choice([10**18, 10**18, 10**12, 10**6, 100])
    ns = []
    for _ in range(t):
        # Mix magnitudes so small and huge values both appear.
        hi = random.choice([top, 10 ** random.randint(0, 18)])
        ns.append(random.randint(0, min(hi, 10**18)))
    return f"{t}\n" + "\n".join(map(str, ns)) + "\n"
