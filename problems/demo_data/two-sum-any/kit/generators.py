import random

# With values from a huge range a random x almost never has a pair, so each
# answer category gets its own generator.


def _size():
    return random.choice([random.randint(2, 50), random.randint(2, 15000), 15000])


def _vmax():
    return random.choice([10, 1000, 10**6, 2 * 10**9, 2 * 10**9])


def gen_stratified_input_found():
    n = _size()
    m = _vmax()
    a = [random.randint(1, m) for _ in range(n)]
    i, j = random.sample(range(n), 2)
    x = max(2, a[i] + a[j])
    return f"{n} {x}\n{' '.join(map(str, a))}\n"


def gen_stratified_input_none():
    n = _size()
    m = _vmax()
    x = random.randint(2, min(2 * m, 4 * 10**9))
    present = set()
    a = []
    # Include the half value once when possible: pairing a coin with itself is
    # the classic mistake, and it must stay unanswerable here.
    if x % 2 == 0 and x // 2 <= 2 * 10**9:
        a.append(x // 2)
        present.add(x // 2)
    while len(a) < n:
        v = random.randint(1, m)
        if x - v in present:
            continue
        a.append(v)
        present.add(v)
    random.shuffle(a)
    return f"{n} {x}\n{' '.join(map(str, a))}\n"
