//! `EventQueue`: the turn's end of its server-event channel, with one event of look-ahead,
//! so that text chunks already queued behind one another can be joined into one delta
//! (`coalesce_into`) without losing or reordering the event that ends the run of chunks:
//! it stays at the front, for the loop or for the teardown that waits for the prompt's
//! answer.

use tokio::sync::mpsc;

use crate::acp::ServerEvent;
use crate::contract::ContentBlockType;

/// The receiving end of a turn's server events.
#[derive(Debug)]
pub(crate) struct EventQueue {
    receiver: mpsc::Receiver<ServerEvent>,
    front: Option<ServerEvent>,
}

impl EventQueue {
    pub(crate) fn new(receiver: mpsc::Receiver<ServerEvent>) -> Self {
        Self {
            receiver,
            front: None,
        }
    }

    /// The next event, or `None` once every sender is gone. Cancel-safe: an event at the
    /// front is handed out in the same poll that takes it.
    pub(crate) async fn recv(&mut self) -> Option<ServerEvent> {
        match self.front.take() {
            Some(event) => Some(event),
            None => self.receiver.recv().await,
        }
    }

    /// Appends to `text` the texts of the chunks of `kind` already queued, in order. Only
    /// what is in the channel is taken (nothing waits); the first other event stays at the
    /// front.
    pub(crate) fn coalesce_into(&mut self, kind: ContentBlockType, text: &mut String) {
        while self.front.is_none() {
            match self.receiver.try_recv() {
                Ok(ServerEvent::Chunk {
                    kind: next,
                    text: more,
                }) if next == kind => {
                    text.push_str(&more);
                }
                Ok(other) => self.front = Some(other),
                Err(_) => break,
            }
        }
    }

    /// Refuses further events; those queued can still be received.
    pub(crate) fn close(&mut self) {
        self.receiver.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AdapterError;

    fn chunk(kind: ContentBlockType, text: &str) -> ServerEvent {
        ServerEvent::Chunk {
            kind,
            text: text.to_owned(),
        }
    }

    /// Queued chunks of one kind join in order; a chunk of another kind, and the prompt's
    /// end behind it, are neither lost nor passed.
    #[tokio::test]
    async fn queued_chunks_join_and_the_next_event_keeps_its_place() {
        let (sender, receiver) = mpsc::channel(8);
        let mut queue = EventQueue::new(receiver);
        for event in [
            chunk(ContentBlockType::Text, "b"),
            chunk(ContentBlockType::Text, "c"),
            chunk(ContentBlockType::Reasoning, "r"),
            ServerEvent::PromptDone(Err(AdapterError::Timeout("t"))),
        ] {
            assert!(sender.send(event).await.is_ok());
        }
        let mut text = "a".to_owned();
        queue.coalesce_into(ContentBlockType::Text, &mut text);
        assert_eq!(text, "abc");
        let Some(ServerEvent::Chunk { kind, text }) = queue.recv().await else {
            panic!("the reasoning chunk was lost");
        };
        assert_eq!((kind, text.as_str()), (ContentBlockType::Reasoning, "r"));
        assert!(matches!(
            queue.recv().await,
            Some(ServerEvent::PromptDone(_))
        ));
        drop(sender);
        assert!(queue.recv().await.is_none());
    }

    /// A closed queue refuses new events at once (a sender is never left waiting on a turn
    /// that settled), and still hands out the events queued before it closed.
    #[tokio::test]
    async fn a_closed_queue_refuses_new_events_and_keeps_the_queued_ones() {
        let (sender, receiver) = mpsc::channel(8);
        let mut queue = EventQueue::new(receiver);
        assert!(
            sender
                .send(chunk(ContentBlockType::Text, "kept"))
                .await
                .is_ok()
        );
        queue.close();
        assert!(
            sender
                .send(chunk(ContentBlockType::Text, "refused"))
                .await
                .is_err(),
            "a closed queue took an event"
        );
        assert!(sender.is_closed());
        let Some(ServerEvent::Chunk { text, .. }) = queue.recv().await else {
            panic!("the event queued before the close was lost");
        };
        assert_eq!(text, "kept");
    }
}
