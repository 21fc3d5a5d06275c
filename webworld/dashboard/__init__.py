"""`webworld dashboard`: a local web view of worlds, state machines, trajectories, datasets,
training runs and eval results, read straight from the folders the other commands write.

Read-only: it never writes, truncates or locks a file another command is writing; a line
cut off mid-write is shown as such. Served on 127.0.0.1 by FastAPI, every asset from the
package (no CDN); state-machine layouts by Graphviz (``dot``).
"""
