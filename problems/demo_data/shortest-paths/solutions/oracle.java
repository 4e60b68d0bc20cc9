import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        int n = nextInt(in), m = nextInt(in);
        int[] head = new int[n + 1], nxt = new int[2 * m], to = new int[2 * m];
        long[] wt = new long[2 * m];
        Arrays.fill(head, -1);
        int e = 0;
        for (int i = 0; i < m; i++) {
            int u = nextInt(in), v = nextInt(in), w = nextInt(in);
            to[e] = v; wt[e] = w; nxt[e] = head[u]; head[u] = e++;
            to[e] = u; wt[e] = w; nxt[e] = head[v]; head[v] = e++;
        }
        long[] d = new long[n + 1];
        Arrays.fill(d, Long.MAX_VALUE);
        d[1] = 0;
        PriorityQueue<long[]> pq = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        pq.add(new long[]{0, 1});
        while (!pq.isEmpty()) {
            long[] top = pq.poll();
            int u = (int) top[1];
            if (top[0] != d[u]) continue;
            for (int k = head[u]; k >= 0; k = nxt[k]) {
                long nd = top[0] + wt[k];
                if (nd < d[to[k]]) { d[to[k]] = nd; pq.add(new long[]{nd, to[k]}); }
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            if (i > 1) sb.append(' ');
            sb.append(d[i] == Long.MAX_VALUE ? -1 : d[i]);
        }
        System.out.println(sb);
    }

    private static int nextInt(DataInputStream in) throws IOException {
        int c = in.read();
        while (c == ' ' || c == '\n' || c == '\r') c = in.read();
        int r = 0;
        while (c >= '0' && c <= '9') { r = r * 10 + (c - '0'); c = in.read(); }
        return r;
    }
}
