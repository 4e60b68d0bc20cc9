import random


# Targets floating-point sqrt: n = k^2 - 1 with k close to 1e9, where the
# double nearest to n is k^2 and the truncated root comes out as k.
def gen_hacking_input_just_below_square():
    t = 10**4
    ns = []
    for _ in range(t):
        k = random.randint(10**8, 10**9)
        ns.append(k * k - 1)
    return f"{t}\n" + "\n".join(map(str, ns)) + "\n"


# Targets corrections that are off by one at exact squares and at the top of
# the range (10^18 itself, 0 and 1).
def gen_hacking_input_exact_squares():
    t = 10**4
    ns = [0, 1, 10**18, 10**18 - 1]
    while len(ns) < t:
        k = random.randint(0, 10**9)
        ns.append(k * k + random.choice([0, 0, 1, -1 if k else 0]))
    random.shuffle(ns)
    return f"{t}\n" + "\n".join(map(str, ns)) + "\n"


# Targets a binary search over [0, n] that squares mid without overflow care.
def gen_hacking_input_huge_values():
    t = 10**4
    ns = [random.randint(10**17, 10**18) for _ in range(t)]
    return f"{t}\n" + "\n".join(map(str, ns)) + "\n"
