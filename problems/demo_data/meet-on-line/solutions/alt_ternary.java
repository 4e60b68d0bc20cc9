import java.io.*;
import java.util.*;

// Correct alternative: the time needed to reach point p is convex in p, so
// ternary-search the meeting point.
public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        StringTokenizer sx = new StringTokenizer(br.readLine());
        StringTokenizer sv = new StringTokenizer(br.readLine());
        double[] x = new double[n], v = new double[n];
        for (int i = 0; i < n; i++) x[i] = Double.parseDouble(sx.nextToken());
        for (int i = 0; i < n; i++) v[i] = Double.parseDouble(sv.nextToken());
        double lo = 1, hi = 1e9;
        for (int it = 0; it < 200; it++) {
            double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
            if (cost(x, v, m1) < cost(x, v, m2)) hi = m2; else lo = m1;
        }
        System.out.printf(Locale.ROOT, "%.12f%n", cost(x, v, (lo + hi) / 2));
    }

    static double cost(double[] x, double[] v, double p) {
        double c = 0;
        for (int i = 0; i < x.length; i++) c = Math.max(c, Math.abs(x[i] - p) / v[i]);
        return c;
    }
}
