//! Dictionary encoding (spec §3.2) and the generic sort's renumbering (spec §8; paper §3.3,
//! Fig. 5).
//!
//! A column of any type becomes a dictionary of its distinct values and a data page of
//! 8- or 16-bit keys (at most 2^16 distinct values; a column with more stays plain). The
//! generic sort re-keys the dictionary so that key order is value order:
//!
//! 1. (host) sort the dictionary by value; a value's position in the sorted dictionary is
//!    its **NKey**;
//! 2. (host) the **key mapping table** sends each original key to its NKey (u16\[U\]);
//! 3. (FPGA) map the data page through it (the **Mapped Key array**, zero-extended to u32),
//!    sort it with the integer sort kernel, and decode the sorted NKeys with the sorted
//!    dictionary, unless that table does not fit on chip: then the last decode is the
//!    host's ([`Placement::HostFallback`]).
//!
//! Example (spec §13.6): dictionary {USA, Iran, Croatia, Brazil, Ghana, Chile} and data page
//! {0, 2, 4, 1, 3} give mapping 0→5, 1→4, 2→2, 3→0, 4→3, 5→1 and Mapped Key array
//! {5, 2, 3, 4, 0}.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::decoder::DecoderKey;
use crate::error::Error;

/// Most distinct values a dictionary-encoded column may have (16-bit keys).
pub const MAX_DISTINCT: usize = 1 << 16;
/// On-chip memory for the dictionary table \[external, spec §1.4\]: the SmartSSD FPGA's 128
/// URAM blocks of 288 Kb (4,096 × 72 bit) each.
pub const URAM_BYTES: usize = 128 * 4096 * 72 / 8;

/// Width of a data-page key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyWidth {
    Bits8,
    Bits16,
}

impl KeyWidth {
    pub fn bits(self) -> u32 {
        match self {
            Self::Bits8 => 8,
            Self::Bits16 => 16,
        }
    }
}

/// The narrowest key for `distinct` values: 8 bits up to 256, 16 bits up to 2^16
/// (⌈log₂ U⌉ rounded up to a byte-aligned width, spec §3.2).
pub fn key_width(distinct: usize) -> Result<KeyWidth, Error> {
    match distinct {
        0..=256 => Ok(KeyWidth::Bits8),
        257..=MAX_DISTINCT => Ok(KeyWidth::Bits16),
        _ => Err(Error::TooManyDistinct { distinct }),
    }
}

/// Key widths the kernels accept: 8, 16 or 32 bits (spec §3.2, §13.8).
pub fn check_key_bits(bits: u32) -> Result<(), Error> {
    match bits {
        8 | 16 | 32 => Ok(()),
        _ => Err(Error::KeyWidth { bits }),
    }
}

/// A dictionary-encoded column: values in first-seen order and one key per row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded<V> {
    pub dictionary: Vec<V>,
    pub keys: Vec<u16>,
    pub width: KeyWidth,
}

/// Dictionary-encode `column`, numbering values in order of first appearance.
pub fn encode<V: Ord + Clone>(column: &[V]) -> Result<Encoded<V>, Error> {
    let mut codes: BTreeMap<&V, u16> = BTreeMap::new();
    let mut dictionary: Vec<V> = Vec::new();
    let mut keys = Vec::with_capacity(column.len());
    for v in column {
        let next = dictionary.len();
        let code = match codes.get(v) {
            Some(&c) => c,
            None if next < MAX_DISTINCT => {
                codes.insert(v, next as u16);
                dictionary.push(v.clone());
                next as u16
            }
            None => {
                let distinct = column
                    .iter()
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
                return Err(Error::TooManyDistinct { distinct });
            }
        };
        keys.push(code);
    }
    let width = key_width(dictionary.len())?;
    Ok(Encoded {
        dictionary,
        keys,
        width,
    })
}

/// The sorted dictionary and the key mapping table (original key → NKey).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renumbered<V> {
    pub sorted: Vec<V>,
    pub mapping: Vec<u16>,
}

impl<V> Renumbered<V> {
    /// Bytes of the key mapping table: 2 per value, at most 128 KiB.
    pub fn mapping_bytes(&self) -> usize {
        2 * self.mapping.len()
    }

    /// The mapping table as a fixed-width (2-byte, little-endian) dictionary, so that the
    /// decoder in fixed-length mode maps a data page to NKeys (option O19's default).
    pub fn mapping_values(&self) -> Vec<[u8; 2]> {
        self.mapping.iter().map(|m| m.to_le_bytes()).collect()
    }
}

/// Sort the dictionary with `Ord` (ascending) and number the values.
pub fn renumber<V: Ord + Clone>(dictionary: &[V]) -> Result<Renumbered<V>, Error> {
    renumber_by(dictionary, V::cmp)
}

/// Sort the dictionary with `cmp` (a total order; e.g. `f64::total_cmp`) and number the
/// values. Equal values are an error: a dictionary maps values one-to-one.
pub fn renumber_by<V: Clone>(
    dictionary: &[V],
    mut cmp: impl FnMut(&V, &V) -> Ordering,
) -> Result<Renumbered<V>, Error> {
    if dictionary.len() > MAX_DISTINCT {
        return Err(Error::TooManyDistinct {
            distinct: dictionary.len(),
        });
    }
    let mut order: Vec<usize> = (0..dictionary.len()).collect();
    order.sort_by(|&a, &b| cmp(&dictionary[a], &dictionary[b]));
    if let Some(w) = order
        .windows(2)
        .find(|w| cmp(&dictionary[w[0]], &dictionary[w[1]]) == Ordering::Equal)
    {
        return Err(Error::DuplicateValue {
            first: w[0].min(w[1]),
            second: w[0].max(w[1]),
        });
    }
    let mut mapping = vec![0u16; dictionary.len()];
    for (nkey, &key) in order.iter().enumerate() {
        mapping[key] = nkey as u16;
    }
    Ok(Renumbered {
        sorted: order.iter().map(|&k| dictionary[k].clone()).collect(),
        mapping,
    })
}

/// Step 6 as a plain gather: each data-page key through the mapping, zero-extended to the
/// sort kernel's 32 bits (the reference for the decoder-based mapping).
pub fn map_keys<K: DecoderKey>(data_page: &[K], mapping: &[u16]) -> Result<Vec<u32>, Error> {
    data_page
        .iter()
        .enumerate()
        .map(|(position, &k)| {
            mapping
                .get(k.index())
                .map(|&m| u32::from(m))
                .ok_or(Error::KeyOutOfRange {
                    position,
                    key: k.index() as u64,
                    values: mapping.len(),
                })
        })
        .collect()
}

/// Where the generic sort's last decode runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The sorted dictionary's table copies fit the on-chip budget: the FPGA decodes.
    OnChip,
    /// They do not: the host decodes the sorted NKeys (spec §8.3, fallback).
    HostFallback,
}

/// Whether `copies` tables of `table_bytes` fit `budget_bytes` of on-chip memory.
pub fn placement(table_bytes: usize, copies: usize, budget_bytes: usize) -> Placement {
    match table_bytes.checked_mul(copies) {
        Some(total) if total <= budget_bytes => Placement::OnChip,
        _ => Placement::HostFallback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitonic::{sort, SortConfig};
    use crate::decoder::{decode, DictionaryTable, Mode};

    const DICTIONARY: [&str; 6] = ["USA", "Iran", "Croatia", "Brazil", "Ghana", "Chile"];

    #[test]
    fn fig5b_generic_sort_end_to_end() {
        let data_page: [u8; 5] = [0, 2, 4, 1, 3];
        let r = renumber(&DICTIONARY).unwrap();
        assert_eq!(
            r.sorted,
            ["Brazil", "Chile", "Croatia", "Ghana", "Iran", "USA"]
        );
        assert_eq!(r.mapping, [5, 4, 2, 0, 3, 1]);
        assert_eq!((r.mapping[0], r.mapping[3]), (5, 0)); // USA → 5, Brazil → 0 [paper]
        assert_eq!(r.mapping_bytes(), 12);
        // Step 6 on the decoder in fixed-length mode, against the plain gather.
        let mapping_table = DictionaryTable::fitted(&r.mapping_values()).unwrap();
        let mapped = decode(
            &mapping_table,
            &data_page,
            Mode::Fixed {
                width: 2,
                lanes: 10,
            },
        )
        .unwrap();
        let mapped: Vec<u32> = mapped
            .bytes
            .chunks_exact(2)
            .map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])))
            .collect();
        assert_eq!(mapped, [5, 2, 3, 4, 0]); // [paper]
        assert_eq!(map_keys(&data_page, &r.mapping).unwrap(), mapped);
        // Step 7: the integer sort kernel.
        let sorted = sort(&mapped, &SortConfig::paper()).unwrap();
        assert_eq!(sorted.keys, [0, 2, 3, 4, 5]); // [paper]
                                                  // Step 8: decode with the sorted dictionary.
        let table = DictionaryTable::fitted(&r.sorted).unwrap();
        assert_eq!(placement(table.bytes(), 1, URAM_BYTES), Placement::OnChip);
        let out = decode(&table, &sorted.keys, Mode::Variable).unwrap();
        assert_eq!(out.bytes, b"BrazilCroatiaGhanaIranUSA");
        assert_eq!(&out.bytes[..6], b"Brazil");
        // The sorted indices reorder the original data page the same way.
        let by_index: Vec<&str> = sorted
            .indices
            .iter()
            .map(|&i| DICTIONARY[data_page[i as usize] as usize])
            .collect();
        assert_eq!(by_index, ["Brazil", "Croatia", "Ghana", "Iran", "USA"]);
    }

    #[test]
    fn encoding_limits_and_key_widths() {
        assert_eq!(key_width(256), Ok(KeyWidth::Bits8));
        assert_eq!(key_width(257), Ok(KeyWidth::Bits16));
        assert_eq!(key_width(65_536).map(KeyWidth::bits), Ok(16));
        assert_eq!(
            key_width(65_537),
            Err(Error::TooManyDistinct { distinct: 65_537 })
        );
        let column: Vec<u32> = (0..70_000).map(|i| i % 65_537).collect();
        assert_eq!(
            encode(&column),
            Err(Error::TooManyDistinct { distinct: 65_537 })
        );
        let ok: Vec<u32> = (0..70_000).map(|i| 1000 - i % 300).collect();
        let e = encode(&ok).unwrap();
        assert_eq!((e.dictionary.len(), e.width), (300, KeyWidth::Bits16));
        assert_eq!(e.dictionary[..2], [1000, 999]);
        assert!(e
            .keys
            .iter()
            .zip(&ok)
            .all(|(&k, &v)| e.dictionary[k as usize] == v));
        for bits in [8, 16, 32] {
            assert!(check_key_bits(bits).is_ok());
        }
        assert_eq!(check_key_bits(64), Err(Error::KeyWidth { bits: 64 }));
        assert_eq!(check_key_bits(12), Err(Error::KeyWidth { bits: 12 }));
    }

    #[test]
    fn floats_duplicates_and_placement() {
        let floats = [2.5f64, -1.0, 0.0, 7.25, -0.0];
        let r = renumber_by(&floats, f64::total_cmp).unwrap();
        assert_eq!(r.sorted, [-1.0, -0.0, 0.0, 2.5, 7.25]);
        assert_eq!(r.mapping, [3, 0, 2, 4, 1]);
        assert_eq!(
            renumber(&["a", "b", "a"]),
            Err(Error::DuplicateValue {
                first: 0,
                second: 2
            })
        );
        assert_eq!(placement(URAM_BYTES, 1, URAM_BYTES), Placement::OnChip);
        assert_eq!(
            placement(URAM_BYTES / 2 + 1, 2, URAM_BYTES),
            Placement::HostFallback
        );
        assert_eq!(
            placement(usize::MAX, 2, URAM_BYTES),
            Placement::HostFallback
        );
        assert!(matches!(
            map_keys(&[0u8, 9], &[1, 0]),
            Err(Error::KeyOutOfRange {
                position: 1,
                key: 9,
                values: 2
            })
        ));
    }
}
