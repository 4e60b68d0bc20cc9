import random


# Targets Kadane that allows the empty range (prints 0): every value negative.
def gen_hacking_input_all_negative():
    n = random.randint(1, 20000)
    a = [random.randint(-10**9, -1) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, a))}\n"


# Targets 32-bit running sums: long runs of large profits.
def gen_hacking_input_big_sum():
    n = 20000
    a = [random.randint(9 * 10**8, 10**9) for _ in range(n)]
    for _ in range(random.randint(0, 5)):
        a[random.randrange(n)] = -10**9
    return f"{n}\n{' '.join(map(str, a))}\n"


# Targets solutions that start "best" at 0 or at a[0] wrongly and the O(n^2)
# scan: maximum size, a single positive value hidden among losses.
def gen_hacking_input_single_peak():
    n = 20000
    a = [random.randint(-10**9, -10**8) for _ in range(n)]
    a[random.randrange(n)] = random.randint(1, 10**9)
    return f"{n}\n{' '.join(map(str, a))}\n"
