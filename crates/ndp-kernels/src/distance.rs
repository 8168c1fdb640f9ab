//! Squared Euclidean distances of many points to one query (the k-NN device part).
//!
//! Each distance is summed feature by feature, in order, as `acc + t * t` with separate
//! f32 roundings (Rust never contracts to FMA on its own), so the result is bit-identical
//! to numpy's column-by-column `subtract`, `square`, `add` in float32.

/// `out[i] = Σ_j (points[i * d + j] - query[j])²` with d = `query.len()`.
///
/// # Panics
/// If `points.len()` is not `out.len() * query.len()`.
pub fn squared_distances_f32(points: &[f32], query: &[f32], out: &mut [f32]) {
    let d = query.len();
    assert_eq!(
        points.len(),
        out.len() * d,
        "points must hold out.len() rows of d features"
    );
    match d {
        2 => fixed::<2>(points, query, out),
        6 => fixed::<6>(points, query, out),
        8 => fixed::<8>(points, query, out),
        _ => any(points, query, out),
    }
}

fn fixed<const D: usize>(points: &[f32], query: &[f32], out: &mut [f32]) {
    let mut q = [0.0f32; D];
    q.copy_from_slice(query);
    for (row, o) in points.chunks_exact(D).zip(out.iter_mut()) {
        let mut acc = 0.0f32;
        for j in 0..D {
            let t = row[j] - q[j];
            acc += t * t;
        }
        *o = acc;
    }
}

fn any(points: &[f32], query: &[f32], out: &mut [f32]) {
    if query.is_empty() {
        out.fill(0.0);
        return;
    }
    for (row, o) in points.chunks_exact(query.len()).zip(out.iter_mut()) {
        *o = row
            .iter()
            .zip(query)
            .fold(0.0f32, |acc, (x, q)| acc + (x - q) * (x - q));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_definition_for_every_width() {
        for d in [1usize, 2, 3, 6, 8] {
            let points: Vec<f32> = (0..d * 5).map(|i| (i as f32) * 0.25 - 3.0).collect();
            let query: Vec<f32> = (0..d).map(|j| j as f32 * 0.5).collect();
            let mut out = vec![0.0f32; 5];
            squared_distances_f32(&points, &query, &mut out);
            for (i, o) in out.iter().enumerate() {
                let mut acc = 0.0f32;
                for j in 0..d {
                    let t = points[i * d + j] - query[j];
                    acc += t * t;
                }
                assert_eq!(*o, acc, "d = {d}, row {i}");
            }
        }
    }

    #[test]
    fn empty_input_gives_empty_output() {
        let mut out: Vec<f32> = vec![];
        squared_distances_f32(&[], &[1.0, 2.0], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    #[should_panic(expected = "points must hold")]
    fn ragged_points_are_rejected() {
        let mut out = vec![0.0f32; 2];
        squared_distances_f32(&[1.0, 2.0, 3.0], &[0.0, 0.0], &mut out);
    }
}
