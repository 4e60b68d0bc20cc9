import random


# Targets pairwise swapping without a fix for odd n (last guest keeps gift)
# and reversal (middle guest keeps gift): only odd sizes.
def gen_hacking_input_all_odd():
    ns = []
    total = 0
    while len(ns) < 1000:
        n = random.randrange(3, 200, 2)
        if total + n > 5 * 10**4:
            break
        ns.append(n)
        total += n
    return f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n"


# Targets forgetting the impossible case: many parties of one guest.
def gen_hacking_input_many_single_guests():
    ns = [random.choice([1, 1, 1, 2, 3]) for _ in range(1000)]
    return f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n"


# Targets slow output or quadratic construction: one big odd party.
def gen_hacking_input_one_big_odd():
    return f"1\n{5 * 10**4 - 1}\n"
