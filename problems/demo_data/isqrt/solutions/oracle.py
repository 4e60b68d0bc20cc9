import math
import sys


def main():
    data = sys.stdin.buffer.read().split()
    t = int(data[0])
    print("\n".join(str(math.isqrt(int(x))) for x in data[1:1 + t]))


main()
