//! The image a power loss leaves: durable names and durable bytes, the last unsynced write
//! torn as asked, and the files a crash point keeps whole or page by page; and the capture of
//! such images at the events a test chooses.

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use super::SimFs;
use super::capture::{Pages, SimEvent, Tear};
use super::names::{DurableNames, Entry};
use super::state::{Node, State, write_into};
use crate::WRITE_BACK_PAGE_SIZE;

/// splitmix64, for the coins of [`Pages`].
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The image of one file under [`Pages`]: the length from one coin, each page from another.
fn paged_image(node: &Node, coins: &mut u64) -> Vec<u8> {
    let live_length = splitmix(coins) & 1 == 1;
    let len = if live_length {
        node.live.len()
    } else {
        node.durable.len()
    };
    let mut image = node.durable.clone();
    image.resize(len, 0);
    for start in (0..len).step_by(WRITE_BACK_PAGE_SIZE) {
        let end = start.saturating_add(WRITE_BACK_PAGE_SIZE).min(len);
        if start >= node.live.len() {
            // Cut from the live file: no page of the live file to write back.
            break;
        }
        // The live page, zero past the live end (the kernel writes a partial last page with
        // zeros past the end of the file).
        let mut page: Vec<u8> = node
            .live
            .get(start..end.min(node.live.len()))
            .unwrap_or_default()
            .to_vec();
        page.resize(end - start, 0);
        if image.get(start..end) != Some(&page[..])
            && splitmix(coins) & 1 == 1
            && let Some(dst) = image.get_mut(start..end)
        {
            dst.copy_from_slice(&page);
        }
    }
    image
}

impl State {
    pub(super) fn image(
        &self,
        tear: Tear,
        written_back: &dyn Fn(&Path) -> bool,
        pages: Option<Pages>,
    ) -> SimFs {
        let state = self;
        let durable = state.durable.paths();
        let mut kept = vec![false; state.nodes.len()];
        for (path, entry) in &state.live {
            if let Entry::File(node) = *entry
                && written_back(path)
                && let Some(flag) = kept.get_mut(node)
            {
                *flag = true;
            }
        }
        let mut paged = vec![false; state.nodes.len()];
        if let Some(pages) = pages {
            for (path, entry) in state.live.iter().chain(&durable) {
                if let Entry::File(node) = *entry
                    && (pages.files)(path)
                    && let Some(flag) = paged.get_mut(node)
                {
                    *flag = true;
                }
            }
        }
        let mut coins = pages.map_or(0, |p| p.seed);
        let mut nodes: Vec<Node> = state
            .nodes
            .iter()
            .zip(kept.iter().zip(&paged))
            .map(|(n, (kept, paged))| {
                let image = if *kept {
                    n.live.clone()
                } else if *paged {
                    paged_image(n, &mut coins)
                } else {
                    n.durable.clone()
                };
                Node {
                    live: image.clone(),
                    durable: image,
                    ..*n
                }
            })
            .collect();
        if let (Tear::KeepPrefix(keep), Some(last)) = (tear, &state.last_write)
            && !kept.get(last.node).copied().unwrap_or(false)
            && !paged.get(last.node).copied().unwrap_or(false)
            && let Some(node) = nodes.get_mut(last.node)
        {
            let kept = last
                .bytes
                .get(..keep.min(last.bytes.len()))
                .unwrap_or_default();
            write_into(&mut node.live, last.position, kept);
            node.durable.clone_from(&node.live);
        }
        let fresh = State {
            nodes,
            durable: DurableNames::from_paths(&durable),
            live: durable,
            dirs: state.dirs,
            ..State::default()
        };
        SimFs {
            state: Arc::new(Mutex::new(fresh)),
        }
    }

    /// Counts an event and captures an image if the capture hook asks for one.
    pub(super) fn event(&mut self, kind: SimEvent) {
        self.events += 1;
        let number = self.events;
        let Some(decide) = self.capture.0.as_mut() else {
            return;
        };
        if let Some(point) = decide(number, kind) {
            let image = match point.written_back {
                Some(keep) => self.image(point.tear, &keep, point.pages),
                None => self.image(point.tear, &|_| false, point.pages),
            };
            self.captured.push((number, kind, image));
        }
    }
}
