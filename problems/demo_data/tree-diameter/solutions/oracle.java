import java.io.*;
import java.util.*;

// Tree DP in BFS order: the longest path through each vertex from its two
// longest downward chains.
public class Main {
    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        int n = nextInt(in);
        int[] head = new int[n + 1], nxt = new int[2 * n], to = new int[2 * n];
        long[] wt = new long[2 * n];
        Arrays.fill(head, -1);
        int e = 0;
        for (int i = 0; i < n - 1; i++) {
            int u = nextInt(in), v = nextInt(in), w = nextInt(in);
            to[e] = v; wt[e] = w; nxt[e] = head[u]; head[u] = e++;
            to[e] = u; wt[e] = w; nxt[e] = head[v]; head[v] = e++;
        }
        int[] order = new int[n], parent = new int[n + 1];
        long[] pw = new long[n + 1];
        order[0] = 1;
        parent[1] = 0;
        int cnt = 1;
        for (int i = 0; i < cnt; i++) {
            int u = order[i];
            for (int k = head[u]; k >= 0; k = nxt[k]) {
                int v = to[k];
                if (v != parent[u]) { parent[v] = u; pw[v] = wt[k]; order[cnt++] = v; }
            }
        }
        long[] down = new long[n + 1];
        long best = 0;
        for (int i = n - 1; i >= 0; i--) {
            int u = order[i];
            int p = parent[u];
            if (p == 0) continue;
            long chain = down[u] + pw[u];
            best = Math.max(best, down[p] + chain);
            down[p] = Math.max(down[p], chain);
        }
        System.out.println(best);
    }

    private static int nextInt(DataInputStream in) throws IOException {
        int c = in.read();
        while (c == ' ' || c == '\n' || c == '\r') c = in.read();
        int r = 0;
        while (c >= '0' && c <= '9') { r = r * 10 + (c - '0'); c = in.read(); }
        return r;
    }
}
