import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    segs = sorted(zip(map(int, data[2:2 + 2 * n:2]), map(int, data[1:1 + 2 * n:2])))
    # segs holds (r, l): earliest finishing request first.
    count = 0
    last_end = 0
    for r, l in segs:
        if l > last_end:
            count += 1
            last_end = r
    print(count)


main()
