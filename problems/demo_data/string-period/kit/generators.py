import random
import string


def _alphabet():
    return random.sample(string.ascii_lowercase, random.choice([2, 3, 26]))


def gen_range_based_input():
    n = random.choice([random.randint(1, 20), random.randint(1, 2 * 10**5), 2 * 10**5])
    alpha = _alphabet()
    if random.random() < 0.4:
        # Plain random text: the answer is almost always n.
        s = "".join(random.choice(alpha) for _ in range(n))
    else:
        # A random block repeated, the last copy usually cut short.
        block_len = random.randint(1, max(1, n // random.choice([1, 2, 3, 10, 1000])))
        block = "".join(random.choice(alpha) for _ in range(block_len))
        s = (block * (n // block_len + 1))[:n]
    return s + "\n"
