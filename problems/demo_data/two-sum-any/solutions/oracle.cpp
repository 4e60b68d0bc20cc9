#include <bits/stdc++.h>
using namespace std;
// Sort by value, then two pointers (finds a possibly different pair than a hash map).
int main() {
    int n;
    long long x;
    scanf("%d %lld", &n, &x);
    vector<pair<long long, int>> a(n);
    for (int i = 0; i < n; ++i) { scanf("%lld", &a[i].first); a[i].second = i + 1; }
    sort(a.begin(), a.end());
    int l = 0, r = n - 1;
    while (l < r) {
        long long s = a[l].first + a[r].first;
        if (s == x) {
            int i = a[l].second, j = a[r].second;
            printf("%d %d\n", min(i, j), max(i, j));
            return 0;
        }
        if (s < x) ++l; else --r;
    }
    puts("-1");
}
