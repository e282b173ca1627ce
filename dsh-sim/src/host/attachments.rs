//! DSH's attachment store in miniature: the one image a scenario's user message may start
//! with (`chat[].after_image`), a 1x1 PNG, as the block DSH stores in the message (a
//! reference, no bytes) and the bytes the host glue resolves for every request that
//! carries it.

use antigravity_acp::contract::{ContentBlock, ImageAttachmentRef, ImageBlock, ResolvedImage};

/// A 1x1 transparent PNG (70 bytes), base64.
const PIXEL_PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// The PNG's decoded length.
const PIXEL_PNG_BYTES: u64 = 70;

/// The image block of attachment `id` and the bytes DSH resolves for it.
pub fn pixel_image(id: &str) -> (ContentBlock, ResolvedImage) {
    let block = ContentBlock::Image(ImageBlock {
        attachment: ImageAttachmentRef {
            attachment_id: id.to_owned(),
            media_type: "image/png".to_owned(),
            bytes: PIXEL_PNG_BYTES,
            width: 1,
            height: 1,
            name: Some("pixel.png".to_owned()),
        },
    });
    let bytes = ResolvedImage {
        media_type: "image/png".to_owned(),
        data_base64: PIXEL_PNG_BASE64.to_owned(),
    };
    (block, bytes)
}
