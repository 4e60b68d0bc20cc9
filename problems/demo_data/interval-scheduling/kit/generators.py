import random


def gen_range_based_input():
    n = random.choice([random.randint(1, 20), random.randint(1, 10**4), 10**4])
    span = random.choice([10, 100, 10**4, 10**9])
    maxlen = random.choice([1, 10, span // 10 + 1, span])
    lines = [str(n)]
    for _ in range(n):
        l = random.randint(1, span)
        r = min(span, l + random.randint(0, maxlen - 1))
        lines.append(f"{l} {r}")
    return "\n".join(lines) + "\n"
