"""The runner fleet: runs handed to workers on any machine of the team, through Celery on Redis.

    queue     the Celery application (at-least-once delivery: late acks, a lost worker's row
              delivered again) and :func:`~desktop_app.fleet.queue.enqueue`
    jobs      submitting work (a batch's rows, a run by intent), its progress, cancel, resume
    rows      what a worker does with a row: claim it, run it, note irreversible steps first
    worker    ``procedura worker``: a Celery worker with headless Chromium
    schedules when a schedule fires (cron fields in a time zone), and adding, changing,
              removing schedules
    beat      the scheduler: Celery beat reading the team's schedules from the database

Why Celery: its beat runs schedules (cron fields, a time zone) with a scheduler that can read
them from our database, late acknowledgement and ``reject_on_worker_lost`` give at-least-once
delivery, ``revoke`` and worker control are there, and it is the most used Python task queue
(operators know it, Flower watches it). Dramatiq is smaller but has no scheduler of its own.
Redis is the broker: one small service, in every distribution.
"""
