#include <bits/stdc++.h>
using namespace std;
// Bug: pops only strictly smaller values, so an equal value is reported as "greater".
int main() {
    int n;
    scanf("%d", &n);
    vector<long long> a(n);
    for (auto &x : a) scanf("%lld", &x);
    vector<int> ans(n, -1), st;
    for (int i = n - 1; i >= 0; --i) {
        while (!st.empty() && a[st.back()] < a[i]) st.pop_back();
        ans[i] = st.empty() ? -1 : st.back() + 1;
        st.push_back(i);
    }
    for (int i = 0; i < n; ++i) printf("%d%c", ans[i], i + 1 == n ? '\n' : ' ');
}
