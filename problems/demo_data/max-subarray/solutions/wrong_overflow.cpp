#include <bits/stdc++.h>
using namespace std;
// Bug: the running sums are 32-bit ints.
int main() {
    int n;
    scanf("%d", &n);
    int best = INT_MIN, cur = 0;
    for (int i = 0; i < n; ++i) {
        int x;
        scanf("%d", &x);
        cur = max(cur + x, x);
        best = max(best, cur);
    }
    printf("%d\n", best);
}
