//! Shape checks whose products could wrap in a release build: they must refuse the input
//! (with their own message), not pass it with outputs left unwritten (found by an audit:
//! `remap_rows_u8` returned with `out` untouched for a width of 2⁶³ + 5).

const WRAPPING_WIDTH: usize = (1 << 63) + 5; // 2 × it wraps to 10

#[test]
#[should_panic(expected = "pixels must hold one row of width pixels per LUT")]
fn remap_refuses_a_width_whose_product_wraps() {
    let mut out = [0u8; 10];
    ndp_kernels::remap_rows_u8(&[1; 10], WRAPPING_WIDTH, &[9; 512], &mut out);
}

#[test]
#[should_panic(expected = "pixels must hold one row of width pixels per histogram")]
fn histograms_refuse_a_width_whose_product_wraps() {
    let mut out = vec![0u64; 512];
    ndp_kernels::histograms_u8(&[1; 10], WRAPPING_WIDTH, &mut out);
}

#[test]
#[should_panic(expected = "pixels must hold one row of width pixels per threshold")]
fn binarize_refuses_a_width_whose_product_wraps() {
    ndp_kernels::pack_rows_above_u8(&[1; 10], WRAPPING_WIDTH, &[0, 0], &mut []);
}

#[test]
#[should_panic(expected = "the points' indices (first_index + rows - 1) overflow i64")]
fn top_k_refuses_indices_past_i64() {
    let (mut indices, mut distances) = (Vec::new(), Vec::new());
    let points = [0.0f32; 8];
    let _ = ndp_kernels::fold_top_k_f32(
        &points,
        &[0.0, 0.0],
        i64::MAX - 2,
        1,
        &mut indices,
        &mut distances,
    );
}

#[test]
fn top_k_takes_indices_up_to_i64_max() {
    let (mut indices, mut distances) = (Vec::new(), Vec::new());
    let points = [3.0f32, 0.0, 2.0, 0.0, 1.0, 0.0];
    let first = i64::MAX - 2; // the last point's index is i64::MAX itself
    ndp_kernels::fold_top_k_f32(&points, &[0.0, 0.0], first, 1, &mut indices, &mut distances)
        .expect("finite");
    assert_eq!((indices, distances), (vec![i64::MAX], vec![1.0]));
}
