#include <bits/stdc++.h>
using namespace std;
// Bug: binary search up to n itself and compares mid * mid, which overflows.
int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        long long n;
        scanf("%lld", &n);
        long long lo = 0, hi = n;
        while (lo < hi) {
            long long mid = lo + (hi - lo + 1) / 2;
            unsigned long long sq = (unsigned long long)mid * (unsigned long long)mid;
            if (sq <= (unsigned long long)n) lo = mid; else hi = mid - 1;
        }
        printf("%lld\n", lo);
    }
}
