#include <bits/stdc++.h>
using namespace std;
// Bug: trusts double sqrt. n = k^2 - 1 near 1e18 rounds up to k^2 as a double.
int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        long long n;
        scanf("%lld", &n);
        printf("%lld\n", (long long)sqrt((double)n));
    }
}
