import random


# Targets 32-bit distances and recursive DFS (depth n): one long path of
# maximal weights, labels shuffled.
def gen_hacking_input_long_path():
    n = 10**4
    perm = list(range(1, n + 1))
    random.shuffle(perm)
    lines = [str(n)]
    for i in range(n - 1):
        lines.append(f"{perm[i]} {perm[i + 1]} {random.randint(999000, 10**6)}")
    return "\n".join(lines) + "\n"


# Targets recursion depth and 32-bit distances: a caterpillar (long spine with
# short legs), spine in natural order so town 1 is an end of it.
def gen_hacking_input_caterpillar():
    n = 10**4
    spine = n // 2
    lines = [str(n)]
    for i in range(1, spine):
        lines.append(f"{i} {i + 1} {10**6}")
    for v in range(spine + 1, n + 1):
        lines.append(f"{v} {random.randint(1, spine)} {random.randint(1, 10**6)}")
    return "\n".join(lines) + "\n"


# Targets the single-pass answer (farthest town from town 1): town 1 is the
# centre of a spider, so the diameter uses two legs.
def gen_hacking_input_spider_center_one():
    n = random.randint(3000, 10**4)
    legs = random.randint(2, 20)
    lines = [str(n)]
    tips = [1] * legs
    for v in range(2, n + 1):
        k = random.randrange(legs)
        lines.append(f"{tips[k]} {v} {random.randint(1, 10**6)}")
        tips[k] = v
    return "\n".join(lines) + "\n"
