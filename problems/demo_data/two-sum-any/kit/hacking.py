import random


# Targets pair sums computed in 32-bit int: both coins near 2e9, x near 4e9.
def gen_hacking_input_huge_sum():
    n = 15000
    a = [random.randint(10**9, 2 * 10**9) for _ in range(n)]
    i, j = random.sample(range(n), 2)
    x = a[i] + a[j]
    return f"{n} {x}\n{' '.join(map(str, a))}\n"


# Targets looking the complement up among all coins, including the coin itself:
# x = 2 * v where v occurs once and no real pair exists.
def gen_hacking_input_half_value_once():
    n = random.randint(2, 15000)
    v = random.randint(1, 10**9)
    x = 2 * v
    a = [v]
    present = {v}
    while len(a) < n:
        y = random.randint(1, 2 * 10**9)
        if x - y in present or y == v:
            continue
        a.append(y)
        present.add(y)
    random.shuffle(a)
    return f"{n} {x}\n{' '.join(map(str, a))}\n"


# Targets the quadratic all-pairs scan: maximum n and no pair at all.
def gen_hacking_input_no_pair_max():
    n = 15000
    x = random.randint(3 * 10**9, 4 * 10**9)
    # Every coin is below x / 2, so no two coins reach x.
    a = [random.randint(1, x // 2 - 1) for _ in range(n)]
    return f"{n} {x}\n{' '.join(map(str, a))}\n"
