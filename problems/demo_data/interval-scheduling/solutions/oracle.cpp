#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    scanf("%d", &n);
    vector<pair<int, int>> s(n);
    for (auto &[l, r] : s) scanf("%d %d", &l, &r);
    sort(s.begin(), s.end(), [](auto &a, auto &b) { return a.second < b.second; });
    int cnt = 0;
    long long last = 0;
    for (auto &[l, r] : s)
        if (l > last) { ++cnt; last = r; }
    printf("%d\n", cnt);
}
