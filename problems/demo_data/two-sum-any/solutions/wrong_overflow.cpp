#include <bits/stdc++.h>
using namespace std;
// Bug: values fit in int, but the pair sum is computed in int and wraps around.
int main() {
    int n;
    long long x;
    scanf("%d %lld", &n, &x);
    vector<pair<unsigned, int>> b(n);
    for (int i = 0; i < n; ++i) { scanf("%u", &b[i].first); b[i].second = i + 1; }
    sort(b.begin(), b.end());
    int l = 0, r = n - 1;
    while (l < r) {
        int s = (int)b[l].first + (int)b[r].first;
        if (s == x) {
            printf("%d %d\n", min(b[l].second, b[r].second), max(b[l].second, b[r].second));
            return 0;
        }
        if (s < x) ++l; else --r;
    }
    puts("-1");
}
