import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    a = list(map(int, data[1:1 + n]))
    ans = [-1] * n
    # Indices still waiting for a strictly greater element, values non-increasing.
    waiting = []
    for j, v in enumerate(a):
        while waiting and a[waiting[-1]] < v:
            ans[waiting.pop()] = j + 1
        waiting.append(j)
    print(" ".join(map(str, ans)))


main()
