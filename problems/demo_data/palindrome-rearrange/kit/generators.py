import random
import string

# A random word longer than a few dozen letters is almost never rearrangeable
# into a palindrome, so YES and NO get separate generators.


def _plan():
    """Return a list of word lengths with a random shape and total <= 2e5."""
    shape = random.random()
    if shape < 0.3:
        t = random.randint(1, 10)
        return [random.randint(1, 2 * 10**5 // t) for _ in range(t)]
    if shape < 0.6:
        t = random.randint(1, 10**4)
        return [random.randint(1, 2 * 10**5 // t) for _ in range(t)]
    if shape < 0.8:
        return [random.randint(1, 20) for _ in range(random.randint(1, 10**4))]
    return [2 * 10**5]


def _alphabet():
    k = random.choice([1, 2, 3, 26, 26])
    return random.sample(string.ascii_lowercase, k)


def _palindromic_word(length, alpha):
    half = random.choices(alpha, k=length // 2)
    letters = half + half
    if length % 2:
        letters.append(random.choice(alpha))
    random.shuffle(letters)
    return "".join(letters)


def _non_palindromic_word(length, alpha):
    # Exactly k letters with an odd count, k >= 2 and k of the same parity as
    # the length; usually the closest miss (k = 2 or 3).
    k = 2 + length % 2
    if random.random() < 0.2:
        k = min(length, 26) - (min(length, 26) - length) % 2
        k = max(k, 2 + length % 2)
    if length < k:
        length = k
    singles_pool = list(alpha) + [c for c in string.ascii_lowercase if c not in alpha]
    singles = random.sample(singles_pool[: max(k, len(alpha))], k)
    pairs = random.choices(alpha, k=(length - k) // 2)
    letters = singles + pairs + pairs
    random.shuffle(letters)
    return "".join(letters)


def _render(words):
    return f"{len(words)}\n" + "\n".join(words) + "\n"


def gen_stratified_input_yes():
    return _render([_palindromic_word(n, _alphabet()) for n in _plan()])


def gen_stratified_input_no():
    return _render([_non_palindromic_word(max(2, n), _alphabet()) for n in _plan()])
