#include <bits/stdc++.h>
using namespace std;
// Correct alternative: binary search with the overflow-free test mid <= n / mid.
int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        long long n;
        scanf("%lld", &n);
        long long lo = 0, hi = 1000000000LL;
        while (lo < hi) {
            long long mid = (lo + hi + 1) / 2;
            if (mid <= n / mid) lo = mid; else hi = mid - 1;
        }
        printf("%lld\n", lo);
    }
}
