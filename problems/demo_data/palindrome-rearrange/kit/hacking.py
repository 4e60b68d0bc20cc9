import random
import string


def _render(words):
    return f"{len(words)}\n" + "\n".join(words) + "\n"


# Targets "every count must be even": odd-length words with one middle letter.
def gen_hacking_input_odd_length_yes():
    words = []
    total = 0
    while total < 150000:
        n = random.randrange(1, 2000, 2)
        half = [random.choice(string.ascii_lowercase) for _ in range(n // 2)]
        w = half + half + [random.choice(string.ascii_lowercase)]
        random.shuffle(w)
        words.append("".join(w))
        total += n
    return _render(words)


# Targets "at most two odd counts": exactly two letters with odd counts.
def gen_hacking_input_two_odd_counts():
    words = []
    for _ in range(random.randint(1000, 5000)):
        n = random.randint(1, 18)
        half = [random.choice("abc") for _ in range(n)]
        a, b = random.sample(string.ascii_lowercase, 2)
        w = half + half + [a, b]
        random.shuffle(w)
        words.append("".join(w))
    return _render(words)


# Targets per-test work that does not scale with the word (resetting large
# tables, re-reading input): the maximum number of one-letter tests.
def gen_hacking_input_many_tiny_tests():
    return _render([random.choice(string.ascii_lowercase) * random.randint(1, 2) for _ in range(10**4)])
