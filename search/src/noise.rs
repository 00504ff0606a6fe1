//! Random draws the search needs: Dirichlet noise and Gumbel variables.
//!
//! Written here (a few lines each) rather than pulled from `rand_distr`, whose
//! current release follows another `rand` major version than the workspace's.

use rand::Rng;

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut impl Rng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Gamma(alpha, 1) draw (Marsaglia and Tsang; boosted for alpha < 1).
fn gamma(rng: &mut impl Rng, alpha: f64) -> f64 {
    if alpha < 1.0 {
        let u = 1.0 - rng.random::<f64>();
        return gamma(rng, alpha + 1.0) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.random::<f64>();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// Fills `out` with a draw from a symmetric Dirichlet(alpha) of `out.len()`
/// components (sums to 1; uniform if every gamma draw underflowed).
pub(crate) fn dirichlet(rng: &mut impl Rng, alpha: f32, out: &mut [f32]) {
    let mut sum = 0.0f64;
    let mut draws = [0.0f64; 64];
    // Draw in chunks so no allocation is needed; normalise at the end.
    let mut values = Vec::new();
    let buf: &mut [f64] = if out.len() <= draws.len() {
        &mut draws[..out.len()]
    } else {
        values.resize(out.len(), 0.0);
        &mut values
    };
    for x in buf.iter_mut() {
        *x = gamma(rng, alpha as f64);
        sum += *x;
    }
    if sum > 0.0 && sum.is_finite() {
        for (o, x) in out.iter_mut().zip(buf.iter()) {
            *o = (*x / sum) as f32;
        }
    } else {
        let n = out.len() as f32;
        out.iter_mut().for_each(|o| *o = 1.0 / n);
    }
}

/// A standard Gumbel draw: `-ln(-ln(u))`, `u` uniform in (0, 1).
pub(crate) fn gumbel(rng: &mut impl Rng) -> f32 {
    let u = rng.random::<f64>().clamp(1e-12, 1.0 - 1e-12);
    (-(-u.ln()).ln()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn dirichlet_sums_to_one_with_the_right_mean_and_spread() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut out = [0.0f32; 4];
        let mut mean = [0.0f64; 4];
        let mut sq = 0.0f64;
        let n = 20_000;
        for _ in 0..n {
            dirichlet(&mut rng, 0.5, &mut out);
            assert!((out.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(out.iter().all(|&x| x >= 0.0));
            for (m, &x) in mean.iter_mut().zip(&out) {
                *m += x as f64 / n as f64;
            }
            sq += (out[0] as f64 - 0.25).powi(2) / n as f64;
        }
        for m in mean {
            assert!((m - 0.25).abs() < 0.01, "mean {m}");
        }
        // Var of one component of Dir(a,...,a), K parts: (1/K)(1-1/K)/(K a + 1) = 0.1875/3.
        assert!((sq - 0.0625).abs() < 0.005, "variance {sq}");
        // Many components take the allocating path.
        let mut big = vec![0.0f32; 100];
        dirichlet(&mut rng, 0.03, &mut big);
        assert!((big.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }

    #[test]
    fn gumbel_has_the_euler_mascheroni_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let n = 50_000;
        let mean: f64 = (0..n).map(|_| gumbel(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean - 0.5772).abs() < 0.02, "mean {mean}");
    }
}
